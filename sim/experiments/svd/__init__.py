"""Entries of PD-SVD and of NormedSecureSum, the protocol it runs on (thesis seed 001, §2.3)."""
