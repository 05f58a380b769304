# unit tests of the image format
