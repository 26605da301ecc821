"""Tournament statistics: crosstable, Elo ratings by maximum likelihood, intervals and LOS.

The rating model is Davidson's (1970) extension of Bradley-Terry with draws, plus a first-move
advantage. For a game in which bot i moves first against bot j, with

    x = theta_i - theta_j + eta        (theta = elo * ln(10) / 400, eta = first-move advantage)

the outcome probabilities are

    P(first wins) = e^(x/2) / Z,   P(draw) = nu / Z,   P(first loses) = e^(-x/2) / Z,
    Z = e^(x/2) + e^(-x/2) + nu.

So P(win) / P(loss) = 10^(elo difference / 400) exactly, and with nu = 0 (no draws) the model is
plain Bradley-Terry / logistic Elo: P(win) = 1 / (1 + 10^(-(elo_i - elo_j + advantage) / 400)).
With draws, a draw counts as neither half a win nor half a loss, so the same score fraction
maps to a larger Elo difference than in the logistic formula (draws are evidence of closeness
only through nu). The log-likelihood is jointly concave in (theta, eta, log nu), and it is
maximised by damped Newton steps.

Prior (weight w = `prior_draws`, default 1): every bot plays w virtual drawn games against a
phantom rated at the mean of all bots, the draw counted as half a win and half a loss in the
logistic (Bradley-Terry) likelihood, so the pull does not depend on nu; the first-move advantage
gets w such virtual draws between equal bots (x = eta); and nu gets w virtual games between
equal bots without advantage split evenly into win, draw and loss (prior mode nu = 1). This
keeps every estimate finite (a bot that wins every game, a first mover that always wins, no
draws or only draws) and shrinks little: a few virtual games against dozens of real ones. With
`prior_draws=0` the fit is the pure maximum likelihood estimate: nu is 0 when no game was drawn,
and the fit diverges (StatsError) when a bot wins or loses every game.

Intervals are profile-likelihood (likelihood-ratio) intervals of the penalised likelihood, the
one the estimates maximise (prior included): the 95% interval of a rating holds every value at
which the log-likelihood, maximised over all the other parameters, is within
deff * chi2(1 df, 95%) / 2 = deff * 1.92 of the maximum. They are as asymmetric as the
likelihood is, cost a few constrained Newton fits each and use no random numbers.

deff is the pair-level design effect of that rating, floored at 1: the cluster-robust sandwich
variance A^-1 B A^-1 over the model-based variance A^-1, with A the negative Hessian of the
penalised log-likelihood and B = G/(G-1) * sum over the G independent units of the outer
product of each unit's log-likelihood gradient (centred on their mean, which the prior moves off
zero). Games that share a `pair` id (the two colour-swapped games of one opening) form one unit;
an unpaired game is its own unit; with fewer than two units deff is 1. So games that hang
together within a pair (a bot that wins both colours of the openings it knows) widen the
interval, and it is never narrower than the model's. The sandwich alone is not enough: when
every pair splits the same way (four games, each pair won twice by the same bot) all units'
centred gradients vanish and it collapses to a zero-width interval.

An end of an interval is unbounded (infinite here, None in `to_dict`) when the games alone
cannot bound it, whatever the prior says: when some direction that moves that rating towards
that end, with the other ratings, the advantage and nu free, makes no game less likely. A bot
that never lost has no upper bound (its draws do not bound it: nu can grow with the gap), one
that never won no lower bound; when every game was drawn, or every first mover won, nothing is
bounded. This is decided exactly, as linear constraints on such directions solved by shortest
paths, not by a cut-off.

The likelihood of superiority P(elo_a > elo_b) is Phi(sign(d) * sqrt(D0 / deff)), with d the
estimated difference and D0 the profile deviance of elo_a - elo_b = 0 (the signed root of the
likelihood ratio): LOS exceeds 97.5% exactly when the 95% interval of the difference excludes 0.
It is 0.5 when the games cannot bound the difference on the far side of 0.

Ratings are reported centred to mean 0, or shifted so that an `anchor` bot has rating 0 (its
interval is then [0, 0] and the others' intervals are those of their difference from it).

The package is split by job, its public names all here: `crosstable` (results and records),
`model` (the penalised likelihood and its Newton fits), `linalg` (the solves they need),
`intervals` (profile-likelihood intervals, LOS, unbounded ends), `elo` (`fit_elo`) and
`output` (JSON values and text tables). Standings built from all of this, for the report and
the server, are competition.standings.
"""

from competition.stats.crosstable import (
    Crosstable,
    GameResult,
    Record,
    StatsError,
    build_crosstable,
)
from competition.stats.elo import EloFit, Rating, fit_elo, likelihood_of_superiority
from competition.stats.intervals import CHI2_95, Z95
from competition.stats.model import ELO_PER_NATURAL
from competition.stats.output import (
    UNBOUNDED_NOTE,
    crosstable_dict,
    finite_or_none,
    fit_dict,
    format_elo,
    format_table,
    has_unbounded_interval,
    rating_dict,
    record_dict,
    to_dict,
)

__all__ = [
    "CHI2_95",
    "ELO_PER_NATURAL",
    "UNBOUNDED_NOTE",
    "Z95",
    "Crosstable",
    "EloFit",
    "GameResult",
    "Rating",
    "Record",
    "StatsError",
    "build_crosstable",
    "crosstable_dict",
    "finite_or_none",
    "fit_dict",
    "fit_elo",
    "format_elo",
    "format_table",
    "has_unbounded_interval",
    "likelihood_of_superiority",
    "rating_dict",
    "record_dict",
    "to_dict",
]
