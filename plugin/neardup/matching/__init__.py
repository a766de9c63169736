"""From signed documents to duplicates: the candidates an engine finds and the one verifier
that decides on them (``candidates``), the cluster rule at index time with its repair after
updates and deletes (``tagging``), and the clusters read back from the tags (``clustering``)."""
