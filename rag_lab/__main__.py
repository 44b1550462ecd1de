from rag_lab.cli import main

raise SystemExit(main())
