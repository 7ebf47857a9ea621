from headway.cli.entry import run

run()
