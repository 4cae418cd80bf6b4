import sys

from gclib.cli import main

sys.exit(main())
