"""One probe of a release as bisect.json (a step) and sweep.json (a result) record
it: the fields both files share, in the order both write them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ReleaseRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: str
    outcome: str  # good | bad | skip
    seconds: float
