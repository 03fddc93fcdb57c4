"""The fictional household of the finance demo: accounts, categories, merchants, budgets."""

from __future__ import annotations

HOME = "USD"
AWAY = "EUR"

CHECKING = "Everyday Checking"
SAVINGS = "High-Yield Savings"
VISA = "Rewards Visa"
TRAVEL_CARD = "Euro Travel Card"

# (name, kind, currency, opening balance in minor units)
ACCOUNTS = (
    (CHECKING, "checking", HOME, 320_000),
    (SAVINGS, "savings", HOME, 1_200_000),
    (VISA, "credit_card", HOME, 0),
    (TRAVEL_CARD, "credit_card", AWAY, 0),
)

CATEGORIES = (
    ("Salary", "income"),
    ("Interest", "income"),
    ("Transfers", "transfer"),
    ("Rent", "expense"),
    ("Groceries", "expense"),
    ("Restaurants", "expense"),
    ("Transport", "expense"),
    ("Utilities", "expense"),
    ("Subscriptions", "expense"),
    ("Fitness", "expense"),
    ("Shopping", "expense"),
    ("Travel", "expense"),
)

# Same amount on the same day every month: (merchant, minor, day, category, account, description)
FIXED_MONTHLY = (
    ("Parkview Apartments", -185_000, 1, "Rent", CHECKING, "Monthly rent"),
    ("Metro Transit", -9_800, 1, "Transport", VISA, "Monthly transit pass"),
    ("FitLife Gym", -4_900, 3, "Fitness", VISA, "Membership"),
    ("Netflix", -1_549, 5, "Subscriptions", VISA, "Monthly subscription"),
    ("Comcast Xfinity", -7_999, 10, "Utilities", CHECKING, "Internet"),
    ("Spotify", -1_199, 12, "Subscriptions", VISA, "Premium plan"),
    ("T-Mobile", -6_500, 18, "Utilities", CHECKING, "Phone plan"),
    ("iCloud+", -299, 20, "Subscriptions", VISA, "200 GB storage"),
    ("Acme Corp Payroll", 520_000, 25, "Salary", CHECKING, "Direct deposit"),
)
SUBSCRIPTIONS = ("Netflix", "Spotify", "iCloud+", "FitLife Gym")
# Netflix's price went up three months before the end of the history.
NETFLIX_NEW_PRICE = -1_799
PRICE_CHANGE_MONTHS_BACK = 3
# A yearly charge, on this day of the history's second month (and a year later).
YEARLY = ("Amazon Prime", -13_900, 14, "Subscriptions", VISA, "Annual membership")

# Freelance invoices paid in, imported without a category: income all the same.
FREELANCE = ("Brightside Studio", 60_000, 140_000, 12)

# Day-to-day spending on the Visa: (merchant, min minor, max minor) per kind.
GROCERS = (
    ("Whole Foods Market", 6_500, 16_000),
    ("Trader Joe's", 4_500, 11_000),
    ("Safeway", 5_000, 13_000),
)
CORNER_SHOP = ("Corner Market", 350, 2_400)
RESTAURANTS = (
    ("Blue Bottle Coffee", 450, 1_200),
    ("Chipotle", 1_100, 2_400),
    ("Sweetgreen", 1_300, 2_200),
    ("Pho 88", 1_600, 3_800),
    ("Luigi's Trattoria", 4_200, 9_500),
    ("The Local Tap", 2_500, 7_000),
)
RIDES = (("Uber", 900, 3_500), ("Lyft", 850, 3_200))
SHOP = ("Amazon", 1_299, 12_000)
ELECTRICITY = ("City Power & Light", 15, 5_500, 14_000)

# The trip abroad, paid on the travel card except the flight.
FLIGHT = ("Delta Air Lines", -84_260)
HOTEL = ("Hôtel du Marais", -114_000)
HOTEL_REFUND = 9_500
TRIP_RESTAURANTS = (
    ("Boulangerie Julien", 450, 1_500),
    ("Café de Flore", 1_800, 4_500),
    ("Le Comptoir du Relais", 3_500, 9_000),
)
TRIP_METRO = ("RATP Paris Metro", 210, 1_690)
TRIP_MUSEUM = ("Musée du Louvre", -2_200)
TRIP_DAYS = range(18, 25)
EUR_TO_USD_PERCENT = 108

SAVINGS_TRANSFER = 50_000

# Recurring monthly budgets in the home currency, and one month-specific override.
BUDGETS = (
    ("Groceries", 60_000),
    ("Restaurants", 30_000),
    ("Transport", 20_000),
    ("Utilities", 26_000),
    ("Subscriptions", 4_000),
    ("Fitness", 6_000),
    ("Shopping", 15_000),
)
TRAVEL_MONTH_OVERRIDE = ("Restaurants", 45_000)
