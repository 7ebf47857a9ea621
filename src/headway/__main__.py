from headway.cli.entry import main

main()
