"""The ground floor: domain types (errors, money, currencies); they import nothing of ours."""
