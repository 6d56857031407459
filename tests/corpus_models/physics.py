"""Physics and signal models: heat and wave equations with np.roll, a spring chain,
total variation, an n-body energy, a smoothness prior with np.diff."""

import numpy as np

from corpus_models import model


@model(lambda rng: (rng.normal(size=8), np.array([0.2])), wrt=(0, 1))
def heat_equation_periodic(u0, alpha):
    u = u0
    for _step in range(5):
        u = u + alpha[0] * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(u * u * np.linspace(0.0, 1.0, 8))


@model(lambda rng: (rng.normal(size=(4, 4)),))
def laplacian_2d_energy(phi):
    lap = (
        np.roll(phi, 1, axis=0)
        + np.roll(phi, -1, axis=0)
        + np.roll(phi, 1, axis=1)
        + np.roll(phi, -1, axis=1)
        - 4 * phi
    )
    return 0.5 * np.sum(lap * lap)


@model(lambda rng: (rng.normal(size=6), rng.normal(size=6) * 0.1), wrt=(0, 1))
def wave_equation_leapfrog(u, v):
    for _step in range(4):
        v = v + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        u = u + 0.1 * v
    return np.sum(u**2) + np.sum(v**2)


@model(lambda rng: (np.cumsum(rng.uniform(0.8, 1.2, size=5)),))
def spring_chain_energy(positions):
    stretch = np.diff(positions) - 1.0
    return 0.5 * np.sum(stretch**2) + 0.1 * np.sum(np.diff(positions, n=2) ** 2)


@model(lambda rng: (rng.normal(size=(4, 2)) * 2,))
def nbody_softened_potential(pos):
    d = pos[:, None, :] - pos[None, :, :]
    r = np.sqrt(np.sum(d * d, axis=-1) + 0.1)
    return -np.sum(np.triu(1.0 / r, 1))


@model(lambda rng: (rng.normal(size=(5, 5)),))
def total_variation_smoothed(img):
    dx = np.diff(img, axis=1)
    dy = np.diff(img, axis=0)
    return np.sum(np.sqrt(dx[:-1, :] ** 2 + dy[:, :-1] ** 2 + 1e-2))


@model(lambda rng: (rng.normal(size=(3, 3)) + 3 * np.eye(3),))
def matrix_log_barrier(a):
    s = a @ a.T
    return -np.log(np.linalg.det(s)) + np.trace(s) + np.sum(np.abs(np.linalg.eigvalsh(s)))
