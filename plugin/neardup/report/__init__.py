"""What neardup shows people: the self-contained HTML report (``html`` with
``templates/report.html``), its charts (``charts``), the passages two texts share
(``worddiff``) and the raw character spans behind shared shingles (``highlight``)."""
