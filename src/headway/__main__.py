from headway.cli.main import main

main()
