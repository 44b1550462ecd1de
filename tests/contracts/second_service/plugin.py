"""``pytest -p tests.contracts.second_service.plugin``: the contract suite's stub of the second service
(its SDK answered at the HTTP layer); the service itself is registered by the package under test."""

from tests.contracts.conftest import SERVICE_STUBS
from tests.contracts.second_service.stub import contract_client

SERVICE_STUBS["Bedrock KB"] = contract_client
