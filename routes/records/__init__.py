"""The caller's finance records that answers cite: transactions, budgets and accounts."""
