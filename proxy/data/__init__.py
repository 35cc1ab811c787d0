"""Data the proxy ships: the movie graph script and the IT-support demo graph generator."""
