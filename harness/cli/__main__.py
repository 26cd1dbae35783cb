from harness.cli.main import main

main()
