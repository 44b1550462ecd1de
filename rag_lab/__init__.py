"""rag-lab."""

from rag_lab.progress import quiet_library_progress

quiet_library_progress()
