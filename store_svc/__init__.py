"""store_svc"""
