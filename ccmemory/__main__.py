from ccmemory.surfaces.cli import main

raise SystemExit(main())
