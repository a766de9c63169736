"""Kibana and OpenSearch Dashboards for a neardup index: the saved objects (index patterns,
visualizations, the dashboard) and their import (``saved_objects``)."""
