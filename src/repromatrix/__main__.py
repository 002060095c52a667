from repromatrix.cli.app import main

raise SystemExit(main())
