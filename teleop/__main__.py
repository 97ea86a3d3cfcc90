import sys

from teleop.cli.main import main

sys.exit(main())
