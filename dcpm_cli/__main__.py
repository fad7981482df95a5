from dcpm_cli.cli.main import main

main()
