import sys

from edge.cli.main import main

sys.exit(main())
