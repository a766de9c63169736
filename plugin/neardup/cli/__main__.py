"""python -m neardup.cli"""

from . import main

main()
