"""Kibana and OpenSearch Dashboards for a neardup index: the index's fields as they see them
(``fields``), the saved objects (index patterns, visualizations, the dashboard;
``saved_objects``) and their import over HTTP (``install``)."""
