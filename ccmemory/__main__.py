from ccmemory.cli import main

raise SystemExit(main())
