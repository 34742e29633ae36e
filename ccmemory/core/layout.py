"""Folder names of a vault, in one leaf module (no imports) so that the hook fast path and every
layer can name them without importing the vault reader."""

VAULT_DIR = ".ccmemory"
LOCAL_DIR = "local"
REFERENCE_DIR = "reference"
