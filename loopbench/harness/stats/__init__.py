"""Statistics over runs, below the runner and the reports: intervals and paired tests
clustered by task (``intervals``), the sign-flip test (``sign_flip``), the quantiles they
use (``distributions``) and the rule that stops a grid once arms separate (``separation``).
Imports nothing, so importing one module does not import the others through this package."""
