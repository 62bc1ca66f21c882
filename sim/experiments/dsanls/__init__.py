"""Entries of Qian et al. (seed 004): DSANLS, the secure variants, their cost and comparison."""
