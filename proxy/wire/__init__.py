"""Codecs shared by both directions of the proxy (client side and database side): Bolt's
PackStream, messages and values, Gremlin's GraphBinary/GraphSON, RESP."""
