"""Static safety rules over rendered Applications (`headway check`). No I/O."""
