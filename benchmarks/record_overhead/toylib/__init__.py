"""A stand-in library: a data-dependent branch and a print, each a graph break in compiled callers."""


def helper(x):  # noqa: ANN001, ANN201
    y = x * 2
    if y.sum() > 0:  # data-dependent branch inside the "library"
        y = y + 1
    return y


def noisy(x):  # noqa: ANN001, ANN201
    print("noisy", x.shape)  # print inside the library
    return x.relu()
