"""Operations on a whole store: check, forget, export/import, reembed, backup."""
