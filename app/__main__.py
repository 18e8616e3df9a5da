import sys

from app.main import main

sys.exit(main())
