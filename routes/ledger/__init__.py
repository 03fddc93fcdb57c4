"""The caller's own records managed by hand: accounts, categories, budgets, transactions,
rules, flow marks and series choices."""
