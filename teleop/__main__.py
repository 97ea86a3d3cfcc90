import sys

from teleop.cli import main

sys.exit(main())
