from tau_tui.cli import main

raise SystemExit(main())
