from loopbench.harness.cli.main import main

main()
