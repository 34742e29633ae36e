"""The published log: an MkDocs site generated from the memories (`ccmemory site build/serve`)."""

from ccmemory.surfaces.site.generator import BuildResult, SiteError, SiteGenerator, site_resources

__all__ = ["BuildResult", "SiteError", "SiteGenerator", "site_resources"]
