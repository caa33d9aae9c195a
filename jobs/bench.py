"""`make bench`: placeholder until the exactly-once source pipeline exists (issue 3)."""

print("make bench: no benchmark yet — the exactly-once pipeline it measures is not built yet.")
