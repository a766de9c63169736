"""How well the methods find near-duplicates: the corpus and its labels (``corpus``), recall,
precision, F1 and AC1 against ground truth (``evaluate``), and the exact all-pairs join that
makes ground truth (``ppjoin``)."""
