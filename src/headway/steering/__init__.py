"""What a person does to Applications and Rollouts by hand, and what they read to decide it:
one implementation behind both surfaces, the CLI (`headway app ...`, `headway rollouts ...`)
and the web dashboard, so a safety check (promote refused on a failed run, one operation at a
time) holds whichever of them asks.

Everything here works through the `Cluster` protocol and raises an error whose message is the
sentence a person reads; the surfaces only print it or show it.
"""
