"""What neardup shows people: the self-contained HTML report (``html`` with
``templates/report.html``) and its charts (``charts``)."""
