"""neardup: near-duplicate document detection for Elasticsearch, OpenSearch and SQLite.

text -> canonical tokens -> shingles -> signatures -> engine -> candidates -> exact verification.
"""

from .api import Comparison, IndexReport, Match, NearDup, Pair
from .config import Config, ConfigError, ConfigMismatch
from .signer import Document, Signed, Signer

__all__ = ["NearDup", "Config", "ConfigError", "ConfigMismatch", "Document", "Signed", "Signer", "Match", "Pair",
           "Comparison", "IndexReport"]
__version__ = "0.1.0"
