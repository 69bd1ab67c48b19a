from dynpr.cli import main

raise SystemExit(main())
