"""All plotting lives here: one module per figure family, a shared style in ``style``.

Figures read tidy tables only (never raw runs), so restyling a figure retrains nothing.
"""
