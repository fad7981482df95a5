from dcpm_cli.cli import main

main()
