"""Where lists come from: sources beside URLs, the forges' listings, filters (ADR 0023).

An entry of a run is a repository URL, an ``owner/repo`` shorthand, or a
:class:`Source` (``github:org/pallets``, ``gitlab:group/gitlab-org``,
``gitea:org/NAME@codeberg.org``, ``bitbucket:workspace/NAME``) that its forge's API
lists: ``read_entries`` reads a list of them. ``listing_feed`` lists the sources
(at most ``listings`` at once), keeps what :class:`Filters` keep, and gives one
stream of ``str | Listed`` that ``AnalyzeUseCase.analyze_many`` clones as it
comes; ``forge_tokens(os.environ)`` reads the forges' tokens as their own command
lines do, each bound to its host, and ``with_forge_tokens`` lets the clones use
them (ADR 0013). Importing this module imports neither trio nor any adapter.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._app import listing_feed as listing_feed
    from ._domain.filters import Filters as Filters
    from ._domain.forge_tokens import ForgeTokens as ForgeTokens
    from ._domain.forge_tokens import forge_tokens as forge_tokens
    from ._domain.listed import Listed as Listed
    from ._domain.listing import ListingError as ListingError
    from ._domain.sources import Forge as Forge
    from ._domain.sources import Source as Source
    from ._domain.sources import SourceKind as SourceKind
    from ._domain.sources import entry_of as entry_of
    from ._domain.sources import read_entries as read_entries
    from ._usecase.listing_feed import LISTINGS_AT_ONCE as LISTINGS_AT_ONCE
    from ._usecase.listing_feed import ListingFeed as ListingFeed
    from ._usecase.listing_feed import ListingHooks as ListingHooks
    from ._usecase.listing_feed import with_forge_tokens as with_forge_tokens

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._app": "listing_feed",
    "._domain.filters": "Filters",
    "._domain.forge_tokens": "ForgeTokens forge_tokens",
    "._domain.listed": "Listed",
    "._domain.listing": "ListingError",
    "._domain.sources": "Forge Source SourceKind entry_of read_entries",
    "._usecase.listing_feed": "LISTINGS_AT_ONCE ListingFeed ListingHooks with_forge_tokens",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)
