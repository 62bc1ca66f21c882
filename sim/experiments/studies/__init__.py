"""Studies across algorithms: π-KSDP against party size (thesis §3.1–3.4) and each party's
learning uplift from PD-NMF (thesis §3.3.1)."""
