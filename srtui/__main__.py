from srtui.cli import main

main()
