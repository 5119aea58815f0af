"""DOT under /o/ (so its issuer is BASE_URL/o) and Django's login page, which
DOT's authorize and device pages redirect to."""
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
]
