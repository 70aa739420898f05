"""vector_svc"""
