"""Security: the policy that decides which pins may be used, how, and by whom."""
